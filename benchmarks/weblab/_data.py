"""The weblab tasks: prompt, start site, the check (answer or server state) and a scripted oracle; which
tasks a run chooses.

Answers are computed from the sites' seeded data, so a change to the data changes the expected answers
with it. Each task's `oracle` is a short script (see `_oracle.py`) that solves it through the real
browser with MolmoWeb actions only, which proves every task solvable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.dataset import Sample

from forge_eval.benchmarks._selection import Selection, select
from forge_eval.benchmarks.weblab._sites import SITES
from forge_eval.benchmarks.weblab._sites.dictionary import ENTRIES
from forge_eval.benchmarks.weblab._sites.flights import FLIGHTS, Flight
from forge_eval.benchmarks.weblab._sites.news import STORIES, latest
from forge_eval.benchmarks.weblab._sites.recipes import RECIPES
from forge_eval.benchmarks.weblab._sites.shop import PRODUCTS
from forge_eval.benchmarks.weblab._sites.wiki import ARTICLES

OracleStep = tuple[Any, ...]
StateCheck = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class WebTask:
    """One weblab task.

    Attributes:
        answer: Strings the final answer must all contain (after normalisation); "a|b" accepts either.
        state: Predicate on the site's `/__state` after the episode (action tasks).
        state_doc: What `state` checks, in words (shown in metadata and to judges' reviewers).
        oracle: Steps of the scripted solution (`_oracle.OP_NAMES`).
    """

    id: str
    site: str
    difficulty: str
    prompt: str
    oracle: tuple[OracleStep, ...]
    answer: tuple[str, ...] = ()
    state: StateCheck | None = None
    state_doc: str = ""
    kind: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", "action" if self.state is not None else "info")


def _unique_max(items: list[Any], key: Callable[[Any], Any]) -> Any:
    best = max(items, key=key)
    assert sum(key(i) == key(best) for i in items) == 1, "weblab data: the best item must be unique"
    return best


def _flights(origin: str, destination: str, date: str) -> list[Flight]:
    return [f for f in FLIGHTS if (f.origin, f.destination, f.date) == (origin, destination, date)]


def _product(name: str) -> Any:
    return next(p for p in PRODUCTS if p.name == name)


def _recipe(name: str) -> Any:
    return next(r for r in RECIPES if r.name == name)


def _search_flights(origin: str, destination: str, date: str) -> tuple[OracleStep, ...]:
    return (
        ("fill", "input[name=from]", origin),
        ("fill", "input[name=to]", destination),
        ("fill", "input[name=date]", date),
        ("click", "button:has-text('Search')"),
    )


def _search(query: str) -> tuple[OracleStep, ...]:
    return (("fill", "input[name=q]", query), ("press", "Enter"))


def _cart_is(expected: dict[str, int]) -> StateCheck:
    return lambda s: s.get("cart") == expected


def _shop_tasks() -> list[WebTask]:
    mice = [p for p in PRODUCTS if p.category == "Mice"]
    cheapest_mouse = min(mice, key=lambda p: p.price)
    keyboards = [p for p in PRODUCTS if p.category == "Keyboards"]
    cheapest_kb = min(keyboards, key=lambda p: p.price)
    best_phones = _unique_max([p for p in PRODUCTS if p.category == "Headphones"], lambda p: p.rating)
    rated = _product("Lumio Studio Headphones")
    two = _product("Voltix Sport Earbuds")
    first, second = _product("Orbit Sport Earbuds"), _product("Kestrel Wireless Headphones")
    return [
        WebTask(
            "shop-cheapest-mouse",
            "shop",
            "medium",
            "What is the price of the cheapest product in the Mice department?",
            (
                ("click", "a:text-is('Mice')"),
                ("click", "a:has-text('Price: low to high')"),
                ("answer", f"${cheapest_mouse.price:.2f} ({cheapest_mouse.name})"),
            ),
            answer=(f"{cheapest_mouse.price:.2f}",),
        ),
        WebTask(
            "shop-rating",
            "shop",
            "easy",
            f"What is the average customer rating of the {rated.name}?",
            (
                *_search(rated.name),
                ("click", f"a:text-is('{rated.name}')"),
                ("answer", f"{rated.rating} out of 5 stars"),
            ),
            answer=(str(rated.rating),),
        ),
        WebTask(
            "shop-best-headphones",
            "shop",
            "medium",
            "Which product in the Headphones department has the best average customer review?",
            (
                ("click", "a:text-is('Headphones')"),
                ("click", "a:has-text('Avg. customer review')"),
                ("answer", best_phones.name),
            ),
            answer=(best_phones.name,),
        ),
        WebTask(
            "shop-add-two",
            "shop",
            "medium",
            f"Add 2 units of the {two.name} to the shopping cart.",
            (
                *_search(two.name),
                ("click", f"a:text-is('{two.name}')"),
                ("fill", "input[name=qty]", "2"),
                ("click", "button:has-text('Add to Cart')"),
                ("answer", "Done: 2 in the cart."),
            ),
            state=_cart_is({str(two.id): 2}),
            state_doc=f"cart = {{{two.name}: 2}}",
        ),
        WebTask(
            "shop-add-cheapest-keyboard",
            "shop",
            "hard",
            "Add the cheapest product of the Keyboards department to the cart (one unit).",
            (
                ("click", "a:text-is('Keyboards')"),
                ("click", "a:has-text('Price: low to high')"),
                ("click", f"a:text-is('{cheapest_kb.name}')"),
                ("click", "button:has-text('Add to Cart')"),
                ("answer", f"Added {cheapest_kb.name}."),
            ),
            state=_cart_is({str(cheapest_kb.id): 1}),
            state_doc=f"cart = {{{cheapest_kb.name}: 1}}",
        ),
        WebTask(
            "shop-add-then-remove",
            "shop",
            "hard",
            f"Put one {first.name} and one {second.name} in the cart, then remove the {first.name} "
            "so that only the other item is left.",
            (
                *_search(first.name),
                ("click", f"a:text-is('{first.name}')"),
                ("click", "button:has-text('Add to Cart')"),
                *_search(second.name),
                ("click", f"a:text-is('{second.name}')"),
                ("click", "button:has-text('Add to Cart')"),
                ("click", "tr:has-text('Orbit Sport Earbuds') button:has-text('Delete')"),
                ("answer", "Done."),
            ),
            state=_cart_is({str(second.id): 1}),
            state_doc=f"cart = {{{second.name}: 1}}",
        ),
    ]


def _flight_tasks() -> list[WebTask]:
    lt = _flights("London", "Tokyo", "2026-03-12")
    cheap_lt = min(lt, key=lambda f: f.price)
    pb = _flights("Paris", "Berlin", "2026-03-11")
    fast_pb = min(pb, key=lambda f: f.minutes)
    nm = _flights("New York", "Madrid", "2026-03-13")
    cheap_nm = min(nm, key=lambda f: f.price)
    tl = _flights("Tokyo", "London", "2026-03-10")
    nonstop = sum(f.stops == 0 for f in tl)
    bp = _flights("Berlin", "Paris", "2026-03-14")
    chosen = bp[0]
    rank = sorted(bp, key=lambda f: f.price).index(chosen)

    def booked(flight: Flight, passenger: str) -> StateCheck:
        return lambda s: (
            [(b["flight"], b["passenger"].lower()) for b in s.get("bookings", [])]
            == [(flight.id, passenger.lower())]
        )

    return [
        WebTask(
            "flights-cheapest",
            "flights",
            "medium",
            "What is the cheapest flight from London to Tokyo on 2026-03-12? Give the airline and the price.",
            (
                *_search_flights("London", "Tokyo", "2026-03-12"),
                ("answer", f"{cheap_lt.airline}, ${cheap_lt.price}"),
            ),
            answer=(cheap_lt.airline, str(cheap_lt.price)),
        ),
        WebTask(
            "flights-fastest",
            "flights",
            "medium",
            "Which airline has the fastest flight from Paris to Berlin on 2026-03-11?",
            (
                *_search_flights("Paris", "Berlin", "2026-03-11"),
                ("click", "a:text-is('Fastest')"),
                ("answer", f"{fast_pb.airline} ({fast_pb.duration})"),
            ),
            answer=(fast_pb.airline,),
        ),
        WebTask(
            "flights-nonstop-count",
            "flights",
            "hard",
            "How many nonstop flights are there from Tokyo to London on 2026-03-10?",
            (*_search_flights("Tokyo", "London", "2026-03-10"), ("answer", f"{nonstop} nonstop flights")),
            answer=(f"{nonstop}|{['zero', 'one', 'two', 'three', 'four'][nonstop]}",),
        ),
        WebTask(
            "flights-book-cheapest",
            "flights",
            "hard",
            "Book the cheapest flight from New York to Madrid on 2026-03-13 for the passenger Alex Kim.",
            (
                *_search_flights("New York", "Madrid", "2026-03-13"),
                ("click", "a:text-is('Select') >> nth=0"),
                ("fill", "input[name=passenger]", "Alex Kim"),
                ("click", "button:has-text('Book')"),
                ("answer", "Booked."),
            ),
            state=booked(cheap_nm, "Alex Kim"),
            state_doc=f"one booking: flight {cheap_nm.id}, Alex Kim",
        ),
        WebTask(
            "flights-book-airline",
            "flights",
            "medium",
            f"Book the {chosen.airline} flight from Berlin to Paris on 2026-03-14 for the passenger "
            "Sam Rivera.",
            (
                *_search_flights("Berlin", "Paris", "2026-03-14"),
                ("click", f"a:text-is('Select') >> nth={rank}"),
                ("fill", "input[name=passenger]", "Sam Rivera"),
                ("click", "button:has-text('Book')"),
                ("answer", "Booked."),
            ),
            state=booked(chosen, "Sam Rivera"),
            state_doc=f"one booking: flight {chosen.id}, Sam Rivera",
        ),
    ]


def _recipe_tasks() -> list[WebTask]:
    best_veg_lasagna = _unique_max(
        [r for r in RECIPES if r.dish == "Lasagna" and r.vegetarian], lambda r: r.rating
    )
    best_curry = _unique_max([r for r in RECIPES if r.dish == "Curry"], lambda r: r.rating)
    cal = _recipe("Quick Lasagna")
    veg = _recipe("Classic Vegetable Lasagna")
    saved = _recipe("Hearty Lasagna")
    return [
        WebTask(
            "recipes-best-veg-lasagna",
            "recipes",
            "medium",
            "Find the highest-rated vegetarian lasagna recipe. What is it called and what is its rating?",
            (
                *_search("lasagna"),
                ("click", "a:has-text('Vegetarian only')"),
                ("click", "a:has-text('Sort by rating')"),
                ("answer", f"{best_veg_lasagna.name}, {best_veg_lasagna.rating} stars"),
            ),
            answer=(best_veg_lasagna.name, str(best_veg_lasagna.rating)),
        ),
        WebTask(
            "recipes-calories",
            "recipes",
            "easy",
            f"How many calories per serving does the recipe '{cal.name}' have?",
            (
                *_search(cal.name),
                ("click", f"a:text-is('{cal.name}')"),
                ("answer", f"{cal.calories} calories"),
            ),
            answer=(str(cal.calories),),
        ),
        WebTask(
            "recipes-vegetable",
            "recipes",
            "medium",
            f"Besides pasta sheets, ricotta and tomato sauce, which vegetable does '{veg.name}' use?",
            (*_search(veg.name), ("click", f"a:text-is('{veg.name}')"), ("answer", veg.ingredients[-1])),
            answer=(veg.ingredients[-1],),
        ),
        WebTask(
            "recipes-save",
            "recipes",
            "medium",
            f"Save the recipe '{saved.name}' to my saved recipes.",
            (
                *_search(saved.name),
                ("click", f"a:text-is('{saved.name}')"),
                ("click", "#save"),
                ("answer", "Saved."),
            ),
            state=lambda s: s.get("saved") == [saved.id],
            state_doc=f"saved = [{saved.name}]",
        ),
        WebTask(
            "recipes-save-best-curry",
            "recipes",
            "hard",
            "Find the best-rated curry recipe and save it to my saved recipes.",
            (
                *_search("curry"),
                ("click", "a:has-text('Sort by rating')"),
                ("click", f"a:text-is('{best_curry.name}')"),
                ("click", "#save"),
                ("answer", "Saved."),
            ),
            state=lambda s: s.get("saved") == [best_curry.id],
            state_doc=f"saved = [{best_curry.name}]",
        ),
    ]


def _wiki_tasks() -> list[WebTask]:
    calder_country = ARTICLES["Calder"].facts["Country"]
    capital = ARTICLES[calder_country.replace(" ", "_")].facts["Capital"]
    veloria_capital = ARTICLES["Veloria"].facts["Capital"]
    return [
        WebTask(
            "wiki-population",
            "wiki",
            "easy",
            "What is the population of Brightwater?",
            (*_search("Brightwater"), ("answer", ARTICLES["Brightwater"].facts["Population"])),
            answer=(ARTICLES["Brightwater"].facts["Population"],),
        ),
        WebTask(
            "wiki-capital",
            "wiki",
            "easy",
            "What is the capital of Tessaly?",
            (*_search("Tessaly"), ("answer", ARTICLES["Tessaly"].facts["Capital"])),
            answer=(ARTICLES["Tessaly"].facts["Capital"],),
        ),
        WebTask(
            "wiki-mayor",
            "wiki",
            "medium",
            "Who is the mayor of the capital city of Veloria?",
            (
                *_search("Veloria"),
                ("click", f"td a:text-is('{veloria_capital}')"),
                ("answer", ARTICLES[veloria_capital].facts["Mayor"]),
            ),
            answer=(ARTICLES[veloria_capital].facts["Mayor"],),
        ),
        WebTask(
            "wiki-two-hop",
            "wiki",
            "hard",
            "Calder lies in some country. In which year was that country's capital city founded?",
            (
                *_search("Calder"),
                ("click", f"td a:text-is('{calder_country}')"),
                ("click", f"td a:text-is('{capital}')"),
                ("answer", ARTICLES[capital].facts["Founded"]),
            ),
            answer=(ARTICLES[capital].facts["Founded"],),
        ),
        WebTask(
            "wiki-watch",
            "wiki",
            "medium",
            "Add the article about Maraq to my watchlist.",
            (*_search("Maraq"), ("click", "button:has-text('Add to watchlist')"), ("answer", "Done.")),
            state=lambda s: s.get("watchlist") == ["Maraq"],
            state_doc="watchlist = [Maraq]",
        ),
    ]


def _news_tasks() -> list[WebTask]:
    science = latest("Science")
    business = latest("Business")
    dated = STORIES[7]

    def subscribed(email: str, topics: list[str]) -> StateCheck:
        return lambda s: s.get("subscriptions") == [{"email": email, "topics": topics}]

    return [
        WebTask(
            "news-latest-science-author",
            "news",
            "medium",
            "Who wrote the most recent story in the Science section?",
            (
                ("click", "header a:text-is('Science')"),
                ("click", f"a:text-is('{science.headline}')"),
                ("answer", science.author),
            ),
            answer=(science.author,),
        ),
        WebTask(
            "news-latest-business",
            "news",
            "easy",
            "What is the headline of the newest Business story?",
            (("click", "header a:text-is('Business')"), ("answer", business.headline)),
            answer=(business.headline,),
        ),
        WebTask(
            "news-date",
            "news",
            "medium",
            f"On what date was the story '{dated.headline}' published?",
            (
                ("click", f"header a:text-is('{dated.section}')"),
                ("click", f"a:text-is('{dated.headline}')"),
                ("answer", dated.date),
            ),
            answer=(dated.date,),
        ),
        WebTask(
            "news-subscribe-two",
            "news",
            "medium",
            "Subscribe reader@example.org to the newsletter for the Science and Sport topics.",
            (
                ("click", "header a:text-is('Newsletter')"),
                ("fill", "input[name=email]", "reader@example.org"),
                ("click", "input[value=Science]"),
                ("click", "input[value=Sport]"),
                ("click", "button:has-text('Subscribe')"),
                ("answer", "Subscribed."),
            ),
            state=subscribed("reader@example.org", ["Science", "Sport"]),
            state_doc="one subscription: reader@example.org, [Science, Sport]",
        ),
        WebTask(
            "news-subscribe-world",
            "news",
            "easy",
            "Sign jo@example.com up for the World newsletter.",
            (
                ("click", "header a:text-is('Newsletter')"),
                ("fill", "input[name=email]", "jo@example.com"),
                ("click", "input[value=World]"),
                ("click", "button:has-text('Subscribe')"),
                ("answer", "Done."),
            ),
            state=subscribed("jo@example.com", ["World"]),
            state_doc="one subscription: jo@example.com, [World]",
        ),
    ]


def _dictionary_tasks() -> list[WebTask]:
    def look_up(word: str) -> tuple[OracleStep, ...]:
        return _search(word)

    return [
        WebTask(
            "dict-ipa",
            "dictionary",
            "easy",
            "What is the UK pronunciation (IPA) of 'ephemeral'?",
            (*look_up("ephemeral"), ("answer", ENTRIES["ephemeral"].ipa)),
            answer=(ENTRIES["ephemeral"].ipa,),
        ),
        WebTask(
            "dict-pos",
            "dictionary",
            "easy",
            "What part of speech is 'procrastinate'?",
            (*look_up("procrastinate"), ("answer", "It is a verb.")),
            answer=("verb",),
        ),
        WebTask(
            "dict-example",
            "dictionary",
            "medium",
            "Quote the example sentence the dictionary gives for 'quixotic'.",
            (*look_up("quixotic"), ("answer", ENTRIES["quixotic"].examples[0])),
            answer=(ENTRIES["quixotic"].examples[0].rstrip("."),),
        ),
        WebTask(
            "dict-senses",
            "dictionary",
            "medium",
            "How many meanings does the dictionary list for 'resilience'?",
            (*look_up("resilience"), ("answer", "2 meanings")),
            answer=("2|two",),
        ),
        WebTask(
            "dict-wordlist",
            "dictionary",
            "hard",
            "Add the words 'serendipity' and 'candid' to my word list.",
            (
                *look_up("serendipity"),
                ("click", "#add"),
                *look_up("candid"),
                ("click", "#add"),
                ("answer", "Done."),
            ),
            state=lambda s: sorted(s.get("wordlist", [])) == ["candid", "serendipity"],
            state_doc="word list = {candid, serendipity}",
        ),
    ]


TASKS: tuple[WebTask, ...] = (
    *_shop_tasks(),
    *_flight_tasks(),
    *_recipe_tasks(),
    *_wiki_tasks(),
    *_news_tasks(),
    *_dictionary_tasks(),
)

BY_ID = {t.id: t for t in TASKS}
QUICK_SUBSET = ("dict-pos", "wiki-capital", "recipes-calories", "news-latest-business")


def task_of(sample_id: str | int | None) -> WebTask:
    """The weblab task of a sample id (`<task id>` or `<task id>@<variant>`)."""
    return BY_ID[str(sample_id).split("@")[0]]


def to_sample(t: WebTask) -> Sample:
    site = SITES.get(t.site)
    return Sample(
        id=t.id,
        input=t.prompt,
        target=list(t.answer) or t.state_doc,
        metadata={
            "site": t.site,
            "kind": t.kind,
            "difficulty": t.difficulty,
            "category": t.site,
            "start_url": site.url,
            "task": f"On {site.title} ({site.url}): {t.prompt}",
            "oracle_steps": len(t.oracle),
        },
    )


def select_tasks(data_dir: None = None, subset: str = "all", task_ids: str | None = None) -> Selection:
    """The tasks of "all", "quick", a site, a kind (info/action), a difficulty, or listed ids (all run
    offline; the data is weblab's own, so `data_dir` is always None)."""
    chosen = select(
        TASKS,
        task_ids,
        subset,
        what="weblab",
        subsets={"quick": QUICK_SUBSET},
        groups=lambda t: (t.site, t.kind, t.difficulty),
    )
    return Selection.of(chosen, sample=to_sample)
