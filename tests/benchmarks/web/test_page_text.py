"""The page as text for models that cannot see screenshots: compact ARIA, element coordinates, the cut."""

from __future__ import annotations

from forge_eval.benchmarks.web import Observation
from forge_eval.benchmarks.web._trajectory import compact_aria

SNAPSHOT = """\
- banner:
  - link "ShopMart":
    - /url: /
- main:
  - paragraph:
    - text: "Department:"
    - link "Mice":
      - /url: /?category=Mice
  - link "Logo":
    - img "Acme"
    - /url: /brand/acme
  - text: $51.24 · 3.6 stars"""


def test_compact_aria_drops_urls_and_only_their_colons() -> None:
    assert compact_aria(SNAPSHOT) == (
        '- banner:\n  - link "ShopMart"\n- main:\n  - paragraph:\n    - text: "Department:"\n'
        '    - link "Mice"\n  - link "Logo":\n    - img "Acme"\n  - text: $51.24 · 3.6 stars'
    )


def test_page_text_in_percent_or_pixels_and_cut_when_long() -> None:
    elements = [{"id": 0, "role": "a", "name": "Mice", "x": 640, "y": 180}]
    obs = Observation("u", "t", [], b"", aria=SNAPSHOT, elements=elements)
    assert '[0] a "Mice" at x=50.0, y=25.0' in obs.page_text((1280, 720))
    assert '[0] a "Mice" at x=640, y=180' in obs.page_text()
    text = obs.page_text((1280, 720), aria_chars=40)
    assert text.endswith("(page text cut)") and "$51.24" not in text and "/url" not in text
    assert "$51.24" in obs.page_text((1280, 720))
