"""Inventory tools."""

from inspect_ai.tool import Tool

from forge_eval.benchmarks.services._client import call_service
from forge_eval.benchmarks.services._toolspec import dumps, service_tool


@service_tool("inventory", "read")
def inventory_search() -> Tool:
    async def execute(query: str = "", low_stock: bool = False) -> str:
        """Find products (sku, name, stock, reorder_level, supplier, unit_price).

        Args:
            query: Words in the product name, sku or supplier; empty = all.
            low_stock: Only products whose stock is below their reorder level.
        """
        params = {"query": query, "low_stock": "true" if low_stock else ""}
        return dumps(await call_service("inventory", "GET", "/products", params=params))

    return execute


@service_tool("inventory", "read", resource_args=("sku",))
def inventory_get() -> Tool:
    async def execute(sku: str) -> str:
        """Get one product by SKU.

        Args:
            sku: Product SKU, e.g. "SKU-100".
        """
        return dumps(await call_service("inventory", "GET", f"/products/{sku}"))

    return execute


@service_tool("inventory", "write", result_id="id")
def inventory_order() -> Tool:
    async def execute(sku: str, quantity: int) -> str:
        """Place a purchase order with the product's supplier.

        Args:
            sku: Product SKU, e.g. "SKU-100".
            quantity: Units to order.
        """
        order = {"sku": sku, "quantity": quantity}
        return dumps(await call_service("inventory", "POST", "/orders", json=order))

    return execute


@service_tool("inventory", "read")
def inventory_list_orders() -> Tool:
    async def execute() -> str:
        """List purchase orders placed so far."""
        return dumps(await call_service("inventory", "GET", "/orders"))

    return execute
