"""Inventory: products with stock and reorder levels, and purchase orders to suppliers."""

from __future__ import annotations

from pydantic import BaseModel, Field

from forge_eval.benchmarks.services._app import Call, Service, endpoint
from forge_eval.benchmarks.services._records import find, get_endpoint, next_id, search


class Product(BaseModel):
    sku: str
    name: str
    stock: int = Field(ge=0)
    reorder_level: int = Field(default=0, ge=0)
    supplier: str = ""
    unit_price: float = Field(default=0.0, ge=0)


class Order(BaseModel):
    id: str
    sku: str
    quantity: int
    supplier: str
    total: float
    status: str = "placed"


class InventoryState(BaseModel):
    products: list[Product] = []
    orders: list[Order] = []


class NewOrder(BaseModel):
    sku: str
    quantity: int = Field(ge=1, le=10_000)


class InventoryService(Service):
    name = "inventory"
    state_model = InventoryState

    @endpoint("GET", "/products")
    async def search(self, call: Call) -> list[Product]:
        products: list[Product] = call.state.products
        if call.query.get("low_stock", "").strip().lower() in ("1", "true", "yes"):
            products = [p for p in products if p.stock < p.reorder_level]
        return search(products, call.query.get("query", ""), lambda p: f"{p.sku} {p.name} {p.supplier}")

    get = get_endpoint("/products/{sku}", "products", "product", key="sku")

    @endpoint("POST", "/orders")
    async def order(self, call: Call) -> Order:
        state: InventoryState = call.state
        request = call.parse(NewOrder)
        product = find(state.products, request.sku, "product", lambda p: p.sku)
        order = Order(
            id=next_id("PO-", [o.id for o in state.orders], start=1001),
            sku=product.sku,
            quantity=request.quantity,
            supplier=product.supplier,
            total=round(product.unit_price * request.quantity, 2),
        )
        state.orders.append(order)
        return order

    @endpoint("GET", "/orders")
    async def orders(self, call: Call) -> list[Order]:
        return list(call.state.orders)
