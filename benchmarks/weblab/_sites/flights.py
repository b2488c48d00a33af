"""A flight search (modelled on Google Flights): search by cities and date, sort, book with a name."""

from __future__ import annotations

import random
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from forge_eval.benchmarks.weblab._site import Site, esc, numbered, redirect, route

CITIES = ["New York", "London", "Paris", "Tokyo", "Berlin", "Madrid"]
DATES = [f"2026-03-{d:02d}" for d in range(10, 15)]
_AIRLINES = ["SkyBridge", "Aerolux", "BlueJet", "Northwind Air", "Cirrus"]


@dataclass(frozen=True)
class Flight:
    id: int
    origin: str
    destination: str
    date: str
    airline: str
    depart: str
    minutes: int
    stops: int
    price: int

    @property
    def duration(self) -> str:
        return f"{self.minutes // 60} hr {self.minutes % 60} min"


def make_flights(seed: int = 23) -> list[Flight]:
    rng = random.Random(seed)
    flights: list[Flight] = []
    for origin in CITIES:
        for destination in CITIES:
            if origin == destination:
                continue
            for date in DATES:
                base = rng.randint(90, 700)
                airlines = rng.sample(_AIRLINES, 4)
                prices = rng.sample(range(base, base + 400, 7), 4)  # distinct per route and day
                minutes = rng.sample(range(base, base + 300, 5), 4)
                for airline, price, mins in zip(airlines, prices, minutes, strict=True):
                    hour = rng.randint(6, 21)
                    flights.append(
                        Flight(
                            len(flights) + 1,
                            origin,
                            destination,
                            date,
                            airline,
                            f"{hour:02d}:{rng.choice(['05', '20', '35', '50'])}",
                            mins,
                            rng.choice([0, 0, 1, 2]),
                            price,
                        )
                    )
    return flights


FLIGHTS = make_flights()


class FlightsSite(Site):
    name = "flights"
    title = "SkyFinder Flights"
    host = "flights.skyfinder.test"
    brand = "#1a73e8"
    nav = (("My trips", "/trips"),)
    initial = {"bookings": []}

    def _form(self, origin: str = "", destination: str = "", date: str = "") -> str:
        return (
            '<form class=search action="/search" method=get>'
            f'<input type=text name=from placeholder="Where from?" aria-label="Where from?" '
            f'value="{esc(origin)}"><input type=text name=to placeholder="Where to?" aria-label="Where to?" '
            f'value="{esc(destination)}">'
            f'<input type=text name=date placeholder="Date (YYYY-MM-DD)" aria-label="Departure date" '
            f'value="{esc(date)}"><button type=submit>Search</button></form>'
        )

    @route("/")
    async def home(self, request: Request) -> Response:
        body = (
            f"<h1>Find cheap flights</h1>{self._form()}<p class=muted>Cities: {', '.join(CITIES)}. "
            f"Dates: {DATES[0]} to {DATES[-1]}.</p>"
        )
        return self.page("Flights", body)

    @route("/search")
    async def search(self, request: Request) -> Response:
        q = request.query_params
        origin, destination, date = (q.get(k, "").strip() for k in ("from", "to", "date"))
        sort = q.get("sort", "price")
        found = [
            f
            for f in FLIGHTS
            if f.origin.lower() == origin.lower()
            and f.destination.lower() == destination.lower()
            and f.date == date
        ]
        found.sort(key=(lambda f: f.minutes) if sort == "duration" else (lambda f: f.price))
        base = f"/search?from={esc(origin)}&to={esc(destination)}&date={esc(date)}"
        sorts = (
            f'<p class=filters>Sort by: <a href="{base}&sort=price">Cheapest</a>'
            f'<a href="{base}&sort=duration">Fastest</a></p>'
        )
        rows = "".join(
            f"<tr><td>{f.airline}</td><td>{f.depart}</td><td>{f.duration}</td>"
            f"<td>{'Nonstop' if f.stops == 0 else str(f.stops) + ' stop' + ('s' if f.stops > 1 else '')}</td>"
            f'<td><b>${f.price}</b></td><td><a class=btn href="/book/{f.id}">Select</a></td></tr>'
            for f in found
        )
        results = (
            (
                f"<table><tr><th>Airline</th><th>Departs</th><th>Duration</th><th>Stops</th><th>Price</th>"
                f"<th></th></tr>{rows}</table>"
            )
            if found
            else "<p>No flights found. Check the cities and date.</p>"
        )
        body = (
            f"{self._form(origin, destination, date)}<h2>{esc(origin)} to {esc(destination)} on {esc(date)}"
            f"</h2>{sorts}{results}"
        )
        return self.page("Search results", body)

    @route("/book/{fid:int}")
    async def book_form(self, request: Request) -> Response:
        f = numbered(FLIGHTS, request.path_params["fid"], "flight")
        body = (
            f"<h1>Book your flight</h1><div class=card>{f.airline} · {f.origin} to {f.destination} · {f.date}"
            f" {f.depart} · {f.duration} · <b>${f.price}</b></div>"
            f'<form method=post action="/book/{f.id}"><label>Passenger name <input type=text name=passenger '
            f'aria-label="Passenger name"></label> <button type=submit>Book</button></form>'
        )
        return self.page("Book", body)

    @route("/book/{fid:int}", "POST")
    async def book(self, request: Request) -> Response:
        fid = request.path_params["fid"]
        form = await request.form()
        passenger = str(form.get("passenger", "")).strip()
        if not passenger or not 1 <= fid <= len(FLIGHTS):
            return self.page("Book", "<p>Please enter the passenger name.</p>", status=400)
        bookings = self.state(request)["bookings"]
        bookings.append({"flight": fid, "passenger": passenger, "ref": f"SF{1000 + len(bookings)}"})
        return redirect("/trips")

    @route("/trips")
    async def trips(self, request: Request) -> Response:
        rows = "".join(
            f"<div class=card>Booking {b['ref']}: {FLIGHTS[b['flight'] - 1].airline} "
            f"{FLIGHTS[b['flight'] - 1].origin} to {FLIGHTS[b['flight'] - 1].destination}, "
            f"{FLIGHTS[b['flight'] - 1].date}, passenger {esc(b['passenger'])}</div>"
            for b in self.state(request)["bookings"]
        )
        return self.page("My trips", f"<h1>My trips</h1>{rows or '<p>No trips booked.</p>'}")
