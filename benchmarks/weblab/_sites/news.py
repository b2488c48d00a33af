"""A news site (modelled on BBC News): sections, dated articles with authors, a newsletter sign-up."""

from __future__ import annotations

import random
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from forge_eval.benchmarks.weblab._site import Site, esc, numbered, redirect, route

SECTIONS = ["World", "Business", "Science", "Sport"]
_SUBJECTS = {
    "World": [
        "Election results announced in Veloria",
        "Floods hit the northern coast",
        "Peace talks resume",
        "New border crossing opens",
        "Summit ends with climate pledge",
    ],
    "Business": [
        "Chip maker doubles profit",
        "Central bank holds rates",
        "Retail sales fall in February",
        "Airline orders 40 new jets",
        "Start-up raises record funding",
    ],
    "Science": [
        "Telescope spots distant water world",
        "New antibiotic found in soil",
        "Bees learn to count",
        "Deep-sea volcano mapped",
        "Fusion test breaks record",
    ],
    "Sport": [
        "Cup final goes to penalties",
        "Marathon record falls in Berlin",
        "Tennis star retires",
        "Underdogs win the league",
        "Cycling team banned",
    ],
}
_AUTHORS = ["Priya Natarajan", "Tom Becker", "Lucia Moreno", "Hannah Osei", "David Lindholm", "Mei Tanaka"]


@dataclass(frozen=True)
class Story:
    id: int
    section: str
    headline: str
    author: str
    date: str
    summary: str


def make_stories(seed: int = 53) -> list[Story]:
    rng = random.Random(seed)
    stories: list[Story] = []
    for section, headlines in _SUBJECTS.items():
        days = rng.sample(range(1, 28), len(headlines))  # distinct dates: "the latest" is unique
        for headline, day in zip(headlines, days, strict=True):
            stories.append(
                Story(
                    len(stories) + 1,
                    section,
                    headline,
                    rng.choice(_AUTHORS),
                    f"2026-02-{day:02d}",
                    f"{headline}. Reporters followed the story for {rng.randint(2, 14)} days.",
                )
            )
    return stories


STORIES = make_stories()


def latest(section: str) -> Story:
    return max((s for s in STORIES if s.section == section), key=lambda s: s.date)


class NewsSite(Site):
    name = "news"
    title = "Daily Courier"
    host = "www.dailycourier.test"
    brand = "#b71c1c"
    clones = ("www.bbc.com",)
    nav = tuple((s, f"/section/{s}") for s in SECTIONS) + (("Newsletter", "/newsletter"),)
    initial = {"subscriptions": []}

    def _list(self, stories: list[Story]) -> str:
        return "".join(
            f'<div class=card><h3><a href="/article/{s.id}">{esc(s.headline)}</a></h3>'
            f"<span class=muted>{s.section} · {s.date}</span></div>"
            for s in sorted(stories, key=lambda s: s.date, reverse=True)
        )

    @route("/")
    @route("/news/")  # the start URL of the site it clones
    async def home(self, request: Request) -> Response:
        top = sorted(STORIES, key=lambda s: s.date, reverse=True)[:6]
        return self.page("Home", f"<h1>Top stories</h1>{self._list(top)}")

    @route("/section/{name}")
    async def section(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in SECTIONS:
            return self.not_found(f"no section {name}")
        return self.page(name, f"<h1>{name}</h1>{self._list([s for s in STORIES if s.section == name])}")

    @route("/article/{sid:int}")
    async def article(self, request: Request) -> Response:
        s = numbered(STORIES, request.path_params["sid"], "article")
        body = (
            f"<h1>{esc(s.headline)}</h1><p class=muted>By <span class=author>{esc(s.author)}</span> · "
            f"{s.date} · {s.section}</p><p>{esc(s.summary)}</p>"
        )
        return self.page(s.headline, body)

    @route("/newsletter")
    async def newsletter_form(self, request: Request) -> Response:
        boxes = "".join(f'<label><input type=checkbox name=topic value="{t}"> {t}</label> ' for t in SECTIONS)
        note = "<p class=notice>Thanks, you are subscribed.</p>" if request.query_params.get("ok") else ""
        body = (
            f"<h1>Newsletter</h1>{note}<form method=post action=/newsletter><p><label>Email "
            f'<input type=email name=email aria-label="Email address"></label></p><p>Topics: {boxes}</p>'
            "<button type=submit>Subscribe</button></form>"
        )
        return self.page("Newsletter", body)

    @route("/newsletter", "POST")
    async def subscribe(self, request: Request) -> Response:
        form = await request.form()
        email = str(form.get("email", "")).strip()
        if "@" not in email:
            return self.page("Newsletter", "<p>Please enter a valid email address.</p>", status=400)
        topics = sorted(str(t) for t in form.getlist("topic"))
        self.state(request)["subscriptions"].append({"email": email, "topics": topics})
        return redirect("/newsletter?ok=1")
