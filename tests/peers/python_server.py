"""A small MCP server built on the official Python SDK, for Plugboard's interoperability tests.

Usage: python_server.py stdio | streamable-http PORT | sse PORT
"""

import sys
from typing import Annotated

from pydantic import BaseModel, Field

from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Elicit, MCPServer, Resolve

server = MCPServer("python-sdk-peer")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


class Booking(BaseModel):
    guests: int = Field(ge=1, le=12, description="How many people")
    name: str = Field(description="Whose name the table is under")


def ask_booking(day: str) -> Elicit[Booking]:
    return Elicit(f"Book a table on {day}: how many guests, and in whose name?", Booking)


@server.tool()
def book_table(day: str, booking: Annotated[ElicitationResult[Booking], Resolve(ask_booking)]) -> str:
    """Book a table; asks the user for the details (elicitation, in either protocol era)."""
    if isinstance(booking, AcceptedElicitation):
        return f"Booked a table for {booking.data.guests} on {day} under {booking.data.name}."
    return f"No booking: the user chose {booking.action}."


@server.resource("peer://about")
def about() -> str:
    """What this server is."""
    return "A Python SDK server used by Plugboard's tests."


@server.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review this code:\n{code}"


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run()
    else:
        server.run(mode, host="127.0.0.1", port=int(sys.argv[2]))
