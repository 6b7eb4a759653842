"""A Python client for rewind's HTTP API (`rewind serve`): typed results (`models`, generated
from serve/openapi.json), a sync `Client` and an `AsyncClient` over httpx, server-sent events
as iterators, errors as `ApiError` with the API's `code`, and `LocalServer` (or
`Client.local()`) to start `rewind serve` for local use."""

from . import models
from .client import ApiError, AsyncClient, Client, Event
from .local import LocalServer, ServerError, find_rewind

__all__ = [
    "ApiError",
    "AsyncClient",
    "Client",
    "Event",
    "LocalServer",
    "ServerError",
    "find_rewind",
    "models",
]
__version__ = "0.1.0"
