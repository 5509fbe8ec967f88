"""The optional ``storage:`` block of a recipe, and where S3 settings come from when it is absent.

Settings follow the AWS conventions users already have: the credential chain (environment, shared config and
credentials files, SSO, container and instance roles) is the AWS SDK's own, and the endpoint comes from
``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` (the variables every AWS SDK reads since 2023) unless the recipe
names one. The recipe block only overrides; a recipe with no ``storage:`` works on AWS and, with the variable
set, on any S3-compatible server.

Secrets are :class:`pydantic.SecretStr`: they never appear in ``repr``/``str``/``model_dump(mode="json")`` or in
a validation error (the value of a secret key is never echoed, unlike every other key's).
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from mdf.errors import RecipeError
from mdf.storage.redact import redact_url
from mdf.validation import format_validation_error, loc_to_path

_SECRETS = frozenset({"access_key_id", "secret_access_key", "session_token"})


class S3Settings(BaseModel):
    """``storage.s3``: how to reach S3 or an S3-compatible server (SeaweedFS, MinIO, R2, Ceph)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint_url: str | None = None
    """``http(s)://host:port`` of an S3-compatible server; default ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``."""
    region: str | None = None
    """Region for signing; default ``AWS_REGION``/``AWS_DEFAULT_REGION``, else ``us-east-1``."""
    anonymous: bool = False
    """Unsigned requests, for public buckets such as ``s3://commoncrawl/`` read without an AWS account."""
    profile: str | None = None
    """A named profile of ``~/.aws/config`` (default: ``AWS_PROFILE`` or the chain)."""
    access_key_id: SecretStr | None = None
    """Prefer the environment or a profile: a key in a recipe file ends up in version control."""
    secret_access_key: SecretStr | None = None
    session_token: SecretStr | None = None
    max_attempts: int = Field(8, ge=1, le=50)
    """Tries per request (ours, around the SDK's own) on 429/500/503/SlowDown, resets and short reads."""
    connect_timeout_s: float = Field(10.0, gt=0)
    request_timeout_s: float = Field(60.0, gt=0)

    @field_validator("endpoint_url")
    @classmethod
    def _scheme(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"endpoint_url must start with http:// or https://, got {redact_url(value)!r}")
        if value is not None and (problem := _credentials_in(value)):
            raise ValueError(problem)
        return value.rstrip("/") if value else value

    def resolved_endpoint(self) -> str | None:
        """The endpoint URL (recipe, then ``AWS_ENDPOINT_URL_S3``, then ``AWS_ENDPOINT_URL``); one carrying
        ``user:password@`` is refused (exit 2) without showing them."""
        for value, where in ((self.endpoint_url, "storage.s3.endpoint_url"),
                             (os.environ.get("AWS_ENDPOINT_URL_S3"), "AWS_ENDPOINT_URL_S3"),
                             (os.environ.get("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL")):  # fmt: skip
            if value:
                if problem := _credentials_in(value):
                    raise RecipeError(problem, where)
                return value
        return None

    def endpoint_source(self) -> str:
        """Where :meth:`resolved_endpoint` came from, for messages: the recipe key or the variable."""
        if self.endpoint_url:
            return "storage.s3.endpoint_url"
        for name in ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"):
            if os.environ.get(name):
                return name
        return "AWS S3 (no endpoint set)"

    def resolved_region(self) -> str:
        return self.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"

    def key_pair(self) -> tuple[str, str, str | None] | None:
        """Explicit keys from the recipe, or ``None`` to let the AWS credential chain find them."""
        if self.access_key_id is None or self.secret_access_key is None:
            return None
        token = self.session_token.get_secret_value() if self.session_token else None
        return self.access_key_id.get_secret_value(), self.secret_access_key.get_secret_value(), token


def _credentials_in(endpoint: str) -> str | None:
    """Why ``endpoint`` cannot be used, when it carries ``user:password@`` (else ``None``).

    Refused rather than taken: pyarrow's and botocore's S3 clients take the endpoint as ``host:port`` and read
    ``user:password@host`` as a host name, and keys in a URL would be printed and logged wherever the endpoint
    is; keys go where the AWS tools look for them, which mdf reads too."""
    if "@" not in urlsplit(endpoint).netloc:
        return None
    return (
        f"the endpoint {redact_url(endpoint)!r} carries credentials (user:password@), which S3 clients would read "
        "as part of the host name; give the endpoint as http(s)://host:port and the keys as AWS_ACCESS_KEY_ID / "
        "AWS_SECRET_ACCESS_KEY, a profile, or storage.s3.access_key_id / secret_access_key"
    )


class StorageSettings(BaseModel):
    """The recipe's ``storage:`` block (every key optional)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    s3: S3Settings = Field(default_factory=S3Settings)


def parse_storage(value: Any, root: str = "storage") -> StorageSettings:
    """Validate a ``storage:`` mapping; a bad key raises :class:`RecipeError` naming its YAML path.

    The value of a secret key is never part of the message (a mistyped secret is still a secret)."""
    if value is None:
        return StorageSettings()
    if not isinstance(value, dict):
        raise RecipeError(f"must be a mapping like {{s3: {{endpoint_url: ...}}}}, got {type(value).__name__}", root)
    try:
        return StorageSettings.model_validate(value)
    except ValidationError as exc:
        for err in exc.errors(include_url=False, include_input=False):
            if "endpoint_url" in err["loc"]:  # the message names it without credentials: never the value itself
                raise RecipeError(err["msg"].removeprefix("Value error, "), loc_to_path(root, err["loc"])) from None
            if _SECRETS & {str(p) for p in err["loc"]}:
                msg = err["msg"].removeprefix("Value error, ")
                raise RecipeError(f"{msg} (value not shown: it is a secret)", loc_to_path(root, err["loc"])) from None
        raise format_validation_error(exc, root, StorageSettings) from None
    except Exception:
        raise RecipeError("invalid storage settings (value not shown)", root) from None
