"""The weblab sites, registered by name in `SITES` (each modelled on a site WebVoyager uses)."""

from forge_eval._registry import Registry
from forge_eval.benchmarks.weblab._site import Site
from forge_eval.benchmarks.weblab._sites.dictionary import DictionarySite
from forge_eval.benchmarks.weblab._sites.flights import FlightsSite
from forge_eval.benchmarks.weblab._sites.news import NewsSite
from forge_eval.benchmarks.weblab._sites.recipes import RecipesSite
from forge_eval.benchmarks.weblab._sites.shop import ShopSite
from forge_eval.benchmarks.weblab._sites.wiki import WikiSite

SITES: Registry[Site] = Registry("weblab site")
for _site in (ShopSite(), FlightsSite(), RecipesSite(), WikiSite(), NewsSite(), DictionarySite()):
    SITES.register(_site.name, _site)

__all__ = ["SITES"]
