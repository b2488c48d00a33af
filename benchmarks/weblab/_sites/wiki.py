"""An encyclopedia (modelled on Wikipedia): search, articles with infoboxes and links, a watchlist."""

from __future__ import annotations

import random
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from forge_eval.benchmarks.weblab._site import Site, esc, redirect, route, search_form

_COUNTRIES = {
    "Veloria": "Amberg",
    "Tessaly": "Korvin",
    "Ostrava Republic": "Lindenfels",
    "Maraq": "Sel Harun",
}
_CITIES = [
    "Brightwater",
    "Calder",
    "Dunmore",
    "Eskerfield",
    "Fallowmere",
    "Glenrock",
    "Harrowgate",
    "Ivybridge",
]


@dataclass(frozen=True)
class Article:
    slug: str
    title: str
    kind: str
    facts: dict[str, str]
    links: tuple[str, ...]


def _slug(title: str) -> str:
    return title.replace(" ", "_")


def make_articles(seed: int = 41) -> dict[str, Article]:
    rng = random.Random(seed)
    articles: dict[str, Article] = {}
    countries = list(_COUNTRIES)
    for country, capital in _COUNTRIES.items():
        articles[_slug(country)] = Article(
            _slug(country),
            country,
            "country",
            {
                "Capital": capital,
                "Population": f"{rng.randint(2, 90) * 1_000_000 + rng.randint(0, 999_999):,}",
                "Official language": rng.choice(["Velorian", "Tessalic", "Ostravan", "Maraqi"]),
                "Founded": str(rng.randint(1200, 1950)),
            },
            (_slug(capital),),
        )
        articles[_slug(capital)] = Article(
            _slug(capital),
            capital,
            "city",
            {
                "Country": country,
                "Population": f"{rng.randint(200_000, 5_000_000):,}",
                "Founded": str(rng.randint(800, 1700)),
                "Mayor": rng.choice(["A. Lindqvist", "M. Okafor", "R. Sato"]),
            },
            (_slug(country),),
        )
    for city in _CITIES:
        country = rng.choice(countries)
        articles[_slug(city)] = Article(
            _slug(city),
            city,
            "city",
            {
                "Country": country,
                "Population": f"{rng.randint(20_000, 900_000):,}",
                "Founded": str(rng.randint(900, 1900)),
                "Elevation": f"{rng.randint(5, 1800)} m",
            },
            (_slug(country),),
        )
    return articles


ARTICLES = make_articles()


class WikiSite(Site):
    name = "wiki"
    title = "Openpedia"
    host = "en.openpedia.test"
    brand = "#37474f"
    nav = (("Watchlist", "/watchlist"),)
    initial = {"watchlist": []}

    @route("/")
    async def home(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip().lower()
        if q:
            exact = next((a for a in ARTICLES.values() if a.title.lower() == q), None)
            if exact is not None:
                return redirect(f"/wiki/{exact.slug}")
        hits = [a for a in ARTICLES.values() if q and q in a.title.lower()]
        listing = "".join(f'<li><a href="/wiki/{a.slug}">{esc(a.title)}</a></li>' for a in hits)
        result = (
            f"<h2>Search results</h2><ul>{listing or '<li>No results</li>'}</ul>"
            if q
            else ("<p>The free encyclopedia of places. Search for a country or a city.</p>")
        )
        return self.page("Openpedia", "<h1>Openpedia</h1>" + search_form("/", q, "Search Openpedia") + result)

    @route("/wiki/{slug}")
    async def article(self, request: Request) -> Response:
        a = ARTICLES.get(request.path_params["slug"])
        if a is None:
            return self.not_found("no such article")
        linked = {ARTICLES[s].title: s for s in a.links}
        rows = "".join(
            f"<tr><th>{k}</th><td>"
            + (f'<a href="/wiki/{linked[v]}">{esc(v)}</a>' if v in linked else esc(v))
            + "</td></tr>"
            for k, v in a.facts.items()
        )
        body = (
            f"<h1>{esc(a.title)}</h1><p>{esc(a.title)} is a {a.kind} described in this article.</p>"
            f'<table class=infobox>{rows}</table><form method=post action="/watch/{a.slug}">'
            f"<button type=submit>Add to watchlist</button></form>"
        )
        return self.page(a.title, body)

    @route("/watch/{slug}", "POST")
    async def watch(self, request: Request) -> Response:
        if (slug := request.path_params["slug"]) in ARTICLES:
            self.remember(request, "watchlist", slug)
        return redirect("/watchlist")

    @route("/watchlist")
    async def watchlist(self, request: Request) -> Response:
        items = "".join(
            f'<li><a href="/wiki/{s}">{esc(ARTICLES[s].title)}</a></li>'
            for s in self.state(request)["watchlist"]
        )
        return self.page("Watchlist", f"<h1>Your watchlist</h1><ul>{items or '<li>Empty</li>'}</ul>")
