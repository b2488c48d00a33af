"""A dictionary (modelled on Cambridge Dictionary): pronunciation, senses, examples, word lists."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from forge_eval.benchmarks.weblab._site import Site, esc, post_button, redirect, route, search_form


@dataclass(frozen=True)
class Entry:
    word: str
    pos: str
    ipa: str
    senses: tuple[str, ...]
    examples: tuple[str, ...]


# Written for weblab (not taken from any dictionary): enough structure for look-up tasks.
ENTRIES = {
    e.word: e
    for e in (
        Entry(
            "serendipity",
            "noun",
            "/ˌser.ənˈdɪp.ə.ti/",
            ("finding good things by chance",),
            ("Meeting her there was pure serendipity.",),
        ),
        Entry(
            "ephemeral",
            "adjective",
            "/ɪˈfem.ər.əl/",
            ("lasting only a short time",),
            ("Fame in the age of social media is ephemeral.",),
        ),
        Entry(
            "meticulous",
            "adjective",
            "/məˈtɪk.jə.ləs/",
            ("very careful about every detail",),
            ("He kept meticulous records of the experiment.",),
        ),
        Entry(
            "gregarious",
            "adjective",
            "/ɡrɪˈɡeə.ri.əs/",
            ("liking to be with other people",),
            ("She is a gregarious host who loves parties.",),
        ),
        Entry(
            "ubiquitous",
            "adjective",
            "/juːˈbɪk.wɪ.təs/",
            ("seeming to be everywhere",),
            ("Phones have become ubiquitous in schools.",),
        ),
        Entry(
            "resilience",
            "noun",
            "/rɪˈzɪl.i.əns/",
            ("the ability to recover quickly", "the ability to spring back"),
            ("The town showed great resilience after the flood.",),
        ),
        Entry(
            "candid",
            "adjective",
            "/ˈkæn.dɪd/",
            ("honest and telling the truth",),
            ("She gave a candid account of her mistakes.",),
        ),
        Entry(
            "quixotic",
            "adjective",
            "/kwɪkˈsɒt.ɪk/",
            ("imaginative but not practical",),
            ("It was a quixotic plan to cross the desert on foot.",),
        ),
        Entry(
            "benevolent",
            "adjective",
            "/bəˈnev.əl.ənt/",
            ("kind and helpful",),
            ("A benevolent donor paid for the new library.",),
        ),
        Entry(
            "procrastinate",
            "verb",
            "/prəˈkræs.tɪ.neɪt/",
            ("to delay doing something",),
            ("I always procrastinate when I have to write reports.",),
        ),
    )
}


class DictionarySite(Site):
    name = "dictionary"
    title = "Lexicon Dictionary"
    host = "dictionary.lexicon.test"
    brand = "#283593"
    clones = ("dictionary.cambridge.org",)
    nav = (("My word lists", "/wordlist"),)
    initial = {"wordlist": []}

    @route("/")
    async def home(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip().lower()
        if q in ENTRIES:
            return redirect(f"/define/{q}")
        miss = f"<p>No entry for “{esc(q)}”.</p>" if q else ""
        return self.page(
            "Dictionary", "<h1>Lexicon Dictionary</h1>" + search_form("/", q, "Search English") + miss
        )

    @route("/define/{word}")
    async def define(self, request: Request) -> Response:
        e = ENTRIES.get(request.path_params["word"].lower())
        if e is None:
            return self.not_found("no such word")
        senses = "".join(f"<li>{esc(s)}</li>" for s in e.senses)
        examples = "".join(f"<li><i>{esc(x)}</i></li>" for x in e.examples)
        body = (
            search_form("/", "", "Search English") + f"<h1>{e.word}</h1><p><i>{e.pos}</i> · UK "
            f"<span class=ipa>{esc(e.ipa)}</span></p><h2>Meaning</h2><ol>{senses}</ol><h2>Examples</h2>"
            f"<ul>{examples}</ul>"
        ) + post_button("add", "Add to word list", f"/api/wordlist/{e.word}", "note", "Added")
        return self.page(e.word, body)

    @route("/api/wordlist/{word}", "POST")
    async def add(self, request: Request) -> Response:
        if (word := request.path_params["word"]) in ENTRIES:
            self.remember(request, "wordlist", word)
        return JSONResponse({"wordlist": self.state(request)["wordlist"]})

    @route("/wordlist")
    async def wordlist(self, request: Request) -> Response:
        items = "".join(f"<li>{w}</li>" for w in self.state(request)["wordlist"])
        return self.page("Word list", f"<h1>My word list</h1><ul>{items or '<li>Empty</li>'}</ul>")
