"""A shop (modelled on Amazon): search, category filter, sort by price, product pages, a cart."""

from __future__ import annotations

import random
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from forge_eval.benchmarks.weblab._site import Site, esc, redirect, route, search_form

_KINDS = {
    "Headphones": [
        "Wireless Headphones",
        "Noise Cancelling Headphones",
        "Sport Earbuds",
        "Studio Headphones",
    ],
    "Keyboards": ["Mechanical Keyboard", "Wireless Keyboard", "Compact Keyboard", "Ergonomic Keyboard"],
    "Mice": ["Wireless Mouse", "Gaming Mouse", "Vertical Mouse", "Travel Mouse"],
    "Monitors": ["27-inch Monitor", "24-inch Monitor", "Curved Monitor", "Portable Monitor"],
    "Backpacks": ["Laptop Backpack", "Hiking Backpack", "Travel Backpack", "Rolling Backpack"],
}
_BRANDS = ["Acme", "Nordia", "Voltix", "Kestrel", "Lumio", "Orbit"]


@dataclass(frozen=True)
class Product:
    id: int
    name: str
    category: str
    price: float
    rating: float
    reviews: int
    stock: int


def make_products(seed: int = 11) -> list[Product]:
    rng = random.Random(seed)
    products: list[Product] = []
    prices: set[float] = set()
    for category, kinds in _KINDS.items():
        for kind in kinds:
            for brand in rng.sample(_BRANDS, 3):
                price = round(rng.uniform(15, 400), 2)
                while price in prices:  # distinct prices: "the cheapest" always has one answer
                    price = round(price + 0.37, 2)
                prices.add(price)
                products.append(
                    Product(
                        id=len(products) + 1,
                        name=f"{brand} {kind}",
                        category=category,
                        price=price,
                        rating=round(rng.uniform(3.0, 5.0), 1),
                        reviews=rng.randint(3, 4000),
                        stock=rng.randint(0, 40),
                    )
                )
    return products


PRODUCTS = make_products()


class ShopSite(Site):
    name = "shop"
    title = "ShopMart"
    host = "www.shopmart.test"
    brand = "#232f3e"
    clones = ("www.amazon.com",)
    nav = (("Cart", "/cart"),)
    initial = {"cart": {}}

    def page(self, title: str, body: str, status: int = 200) -> HTMLResponse:
        """Every shop page starts with the search box, as on real shops."""
        return super().page(title, search_form("/", "", "Search ShopMart") + body, status)

    @route("/")
    async def home(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip().lower()
        category = request.query_params.get("category", "")
        sort = request.query_params.get("sort", "")
        items = [
            p for p in PRODUCTS if (not q or q in p.name.lower()) and (not category or p.category == category)
        ]
        if sort == "price":
            items.sort(key=lambda p: p.price)
        elif sort == "rating":
            items.sort(key=lambda p: -p.rating)
        base = f"/?q={esc(q)}"
        cats = " ".join(f'<a href="{base}&category={c}&sort={sort}">{c}</a>' for c in _KINDS)
        sorts = (
            f'Sort: <a href="{base}&category={category}&sort=price">Price: low to high</a> '
            f'<a href="{base}&category={category}&sort=rating">Avg. customer review</a>'
        )
        cards = "".join(
            f'<div class=card><h3><a href="/product/{p.id}">{esc(p.name)}</a></h3>'
            f"<b>${p.price:.2f}</b> · {p.rating} stars · {p.reviews} ratings</div>"
            for p in items
        )
        body = (
            f"<p class=filters>Department: {cats}</p>"
            f"<p class=filters>{sorts}</p><p class=muted>{len(items)} results</p>{cards}"
        )
        return self.page("Shop", body)

    @route("/product/{pid:int}")
    async def product(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        p = next((p for p in PRODUCTS if p.id == pid), None)
        if p is None:
            return self.not_found(f"no product {pid}")
        body = (
            f"<h1>{esc(p.name)}</h1><p>Department: {p.category}</p><p class=price>Price: <b>${p.price:.2f}"
            f"</b></p><p>{p.rating} out of 5 stars · {p.reviews} ratings</p><p>In stock: {p.stock}</p>"
            f'<form method=post action="/cart/add"><input type=hidden name=pid value={p.id}>'
            f"<label>Quantity <input type=number name=qty value=1 min=1 max=9 aria-label=Quantity></label> "
            f"<button type=submit>Add to Cart</button></form>"
        )
        return self.page(p.name, body)

    @route("/cart")
    async def cart(self, request: Request) -> Response:
        cart: dict[str, int] = self.state(request)["cart"]
        rows = ""
        total = 0.0
        for pid, qty in cart.items():
            p = PRODUCTS[int(pid) - 1]
            total += p.price * qty
            rows += (
                f"<tr><td>{esc(p.name)}</td><td>{qty}</td><td>${p.price * qty:.2f}</td><td>"
                f'<form method=post action="/cart/remove"><input type=hidden name=pid value={pid}>'
                f"<button type=submit>Delete</button></form></td></tr>"
            )
        table = (
            (
                f"<table><tr><th>Item</th><th>Qty</th><th>Price</th><th></th></tr>{rows}</table>"
                f"<p>Subtotal: <b>${total:.2f}</b></p>"
            )
            if cart
            else "<p>Your cart is empty.</p>"
        )
        note = "<p class=notice>Added to cart.</p>" if request.query_params.get("added") else ""
        return self.page("Cart", f"<h1>Shopping Cart</h1>{note}{table}")

    @route("/cart/add", "POST")
    async def add(self, request: Request) -> Response:
        form = await request.form()
        pid = str(int(str(form["pid"])))
        qty = max(1, min(9, int(str(form.get("qty") or 1))))
        cart = self.state(request)["cart"]
        cart[pid] = cart.get(pid, 0) + qty
        return redirect("/cart?added=1")

    @route("/cart/remove", "POST")
    async def remove(self, request: Request) -> Response:
        form = await request.form()
        self.state(request)["cart"].pop(str(form["pid"]), None)
        return redirect("/cart")
