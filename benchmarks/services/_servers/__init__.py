"""The concrete services, one module each, registered by name in `SERVICES`."""

from forge_eval._registry import Registry
from forge_eval.benchmarks.services._app import Service
from forge_eval.benchmarks.services._servers.calendar import CalendarService
from forge_eval.benchmarks.services._servers.contacts import ContactsService
from forge_eval.benchmarks.services._servers.inventory import InventoryService
from forge_eval.benchmarks.services._servers.kb import KbService
from forge_eval.benchmarks.services._servers.mail import MailService
from forge_eval.benchmarks.services._servers.tickets import TicketsService

SERVICES: Registry[Service] = Registry("service")
for _service in (MailService(), CalendarService(), TicketsService(), KbService(), ContactsService(),
                 InventoryService()):
    SERVICES.register(_service.name, _service)

__all__ = ["SERVICES"]
