"""A recipe site (modelled on Allrecipes): search, vegetarian filter, sort by rating, save favourites."""

from __future__ import annotations

import random
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from forge_eval.benchmarks.weblab._site import Site, esc, numbered, post_button, route, search_form

_DISHES = {
    "Lasagna": ["pasta sheets", "ricotta", "tomato sauce"],
    "Curry": ["coconut milk", "curry paste", "rice"],
    "Chili": ["kidney beans", "tomatoes", "chili powder"],
    "Pancakes": ["flour", "milk", "eggs"],
    "Soup": ["stock", "onion", "celery"],
    "Salad": ["lettuce", "cucumber", "olive oil"],
}
_STYLES = ["Classic", "Easy", "Spicy", "Grandma's", "Quick", "Cheesy", "Hearty", "Vegan"]
_VEG_EXTRAS = ["zucchini", "spinach", "mushrooms", "eggplant"]
_MEAT_EXTRAS = ["beef", "chicken", "sausage", "bacon"]


@dataclass(frozen=True)
class Recipe:
    id: int
    name: str
    dish: str
    vegetarian: bool
    rating: float
    reviews: int
    prep_minutes: int
    calories: int
    servings: int
    ingredients: tuple[str, ...]


def make_recipes(seed: int = 37) -> list[Recipe]:
    rng = random.Random(seed)
    recipes: list[Recipe] = []
    ratings: set[tuple[str, float]] = set()
    for dish, base in _DISHES.items():
        for style in rng.sample(_STYLES, 6):
            vegetarian = style == "Vegan" or rng.random() < 0.5
            extra = rng.choice(_VEG_EXTRAS if vegetarian else _MEAT_EXTRAS)
            rating = round(rng.uniform(3.5, 4.9), 1)
            while (dish, rating) in ratings:  # distinct ratings per dish: "the best rated" is unique
                rating = round(rating - 0.1, 1)
            ratings.add((dish, rating))
            name = f"{style} {'Vegetable ' if vegetarian and style != 'Vegan' else ''}{dish}"
            recipes.append(
                Recipe(
                    len(recipes) + 1,
                    name,
                    dish,
                    vegetarian,
                    rating,
                    rng.randint(5, 900),
                    rng.choice(range(10, 95, 5)),
                    rng.randint(180, 900),
                    rng.choice([2, 4, 6, 8]),
                    (*base, extra),
                )
            )
    return recipes


RECIPES = make_recipes()


class RecipesSite(Site):
    name = "recipes"
    title = "RecipeBox"
    host = "www.recipebox.test"
    brand = "#d84315"
    clones = ("www.allrecipes.com",)
    nav = (("Saved recipes", "/saved"),)
    initial = {"saved": []}

    @route("/")
    async def home(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip().lower()
        veg = request.query_params.get("veg") == "1"
        sort = request.query_params.get("sort", "")
        items = [r for r in RECIPES if (not q or q in r.name.lower()) and (not veg or r.vegetarian)]
        if sort == "rating":
            items.sort(key=lambda r: -r.rating)
        base = f"/?q={esc(q)}"
        filters = (
            f'<p class=filters><a href="{base}&veg=1&sort={sort}">Vegetarian only</a>'
            f'<a href="{base}&veg={int(veg)}&sort=rating">Sort by rating</a><a href="{base}">Clear</a></p>'
        )
        cards = "".join(
            f'<div class=card><h3><a href="/recipe/{r.id}">{esc(r.name)}</a></h3>'
            f"{r.rating} stars · {r.reviews} reviews{' · vegetarian' if r.vegetarian else ''}</div>"
            for r in items
        )
        body = (
            search_form("/", q, "Find a recipe") + filters + f"<p class=muted>{len(items)} recipes</p>{cards}"
        )
        return self.page("Recipes", body)

    @route("/recipe/{rid:int}")
    async def recipe(self, request: Request) -> Response:
        r = numbered(RECIPES, request.path_params["rid"], "recipe")
        items = "".join(f"<li>{esc(i)}</li>" for i in r.ingredients)
        body = (
            f"<h1>{esc(r.name)}</h1><p>{r.rating} stars · {r.reviews} reviews</p><table>"
            f"<tr><th>Prep time</th><td>{r.prep_minutes} mins</td></tr><tr><th>Calories</th>"
            f"<td>{r.calories} per serving</td></tr><tr><th>Servings</th><td>{r.servings}</td></tr></table>"
            "<h2>Ingredients</h2>"
            f"<ul>{items}</ul>"
        ) + post_button("save", "Save recipe", f"/api/save/{r.id}", "saved-note", "Saved!")
        return self.page(r.name, body)

    @route("/api/save/{rid:int}", "POST")
    async def save(self, request: Request) -> Response:
        return JSONResponse({"saved": self.remember(request, "saved", request.path_params["rid"])})

    @route("/saved")
    async def saved(self, request: Request) -> Response:
        cards = "".join(
            f'<div class=card><a href="/recipe/{i}">{esc(RECIPES[i - 1].name)}</a></div>'
            for i in self.state(request)["saved"]
        )
        return self.page("Saved", f"<h1>Saved recipes</h1>{cards or '<p>Nothing saved yet.</p>'}")
