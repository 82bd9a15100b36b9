"""The fixed question ``judge ping`` asks a model, to check that a config works end to end."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class PingAnswer(BaseModel):
    label: Literal["supported", "unsupported"]
    rationale: str = Field(max_length=400)


PING_MESSAGES = [
    {"role": "system", "content": "You check whether a claim is supported by a source. Answer in JSON."},
    {
        "role": "user",
        "content": "<source>The Golden Gate Bridge opened in 1937.</source>\n"
        "<claim>The Golden Gate Bridge opened in 1937.</claim>\nIs the claim supported by the source?",
    },
]
