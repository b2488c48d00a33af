"""The weblab sites, registered by name in `SITES` (each modelled on a site WebVoyager uses), and the
process-wide cluster that serves them."""

from forge_eval._registry import Registry
from forge_eval.benchmarks.services import ServiceCluster
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


def sites() -> ServiceCluster:
    """The process-wide weblab sites (started on first use)."""
    return ServiceCluster.shared(catalog=SITES)  # type: ignore[arg-type]  # sites serve like services


def host_map(cluster: ServiceCluster) -> dict[str, str]:
    """Each site's public hostname -> its local server, for the browser's request routing."""
    return {site.host: cluster.url(name) for name, site in SITES.items()}


def clone_map(cluster: ServiceCluster) -> dict[str, str]:
    """Real hostnames weblab clones -> their local site (for live-web benchmarks run offline)."""
    return {host: cluster.url(name) for name, site in SITES.items() for host in site.clones}


def clone_host_map() -> dict[str, str]:
    """`clone_map` of the process-wide sites: the live-web benchmarks' `-T local_clones=true`."""
    return clone_map(sites())


__all__ = ["SITES", "clone_host_map", "clone_map", "host_map", "sites"]
