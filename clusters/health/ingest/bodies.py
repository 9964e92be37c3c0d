"""Where pushed health bodies wait for the worker: a local directory (one host) or the portal's S3 bucket.

A push is written as the request streams and read by the health worker as a stream, so the two only
need to share the place the body waits in. ``HEALTH_PUSH_STORAGE=local`` keeps it in ``HEALTH_PUSH_DIR``
(web server and worker on one host, or a shared volume); ``s3`` keeps it in ``HEALTH_PUSH_BUCKET``, so
health workers can run on any host that reaches the bucket. The row's ``body`` names the body with its
storage (``s3://bucket/key`` or a path), so a push is read from where it was written even when the
setting changed in between.

S3: a body under 8 MiB is one ``PutObject``; a larger one is a multipart upload, a part sent each time
8 MiB have been written, aborted when the request fails. The bucket is the portal's own: created on
first use with a lifecycle rule that expires bodies a day after they were written (a push is done,
failed or given up long before) and aborts multipart uploads left incomplete. Every client comes from
``portal.core.aws``.

Outages: the storage's client has short connect and read timeouts and few retries
(``HEALTH_PUSH_S3_*_TIMEOUT``, ``HEALTH_PUSH_S3_MAX_ATTEMPTS``), so a hung store costs a push request seconds, not
the whole hang. A store that cannot be reached (refused, timed out, 5xx) raises :class:`StorageUnavailable`:
the push endpoint answers 503 with ``Retry-After`` and the worker tries the read again later, where
:class:`BodyMissing` (the key or the bucket is gone) is final. No process remembers that the bucket exists:
a write that meets ``NoSuchBucket`` (S3 came back empty) creates it and writes again.
"""
from __future__ import annotations

import contextlib
import io
import uuid
from pathlib import Path

import urllib3
from django.conf import settings

from portal.core import aws

PART = 8 << 20  # S3's minimum part is 5 MiB; 8 MiB keeps a 40 MB body to five requests
PREFIX = "pushes/"
S3 = "s3://"
GONE = ("NoSuchKey", "NoSuchBucket", "404", "NotFound")


class BodyMissing(OSError):
    """The stored body is gone (deleted, expired, or never written)."""


class StorageUnavailable(OSError):
    """The push storage could not be reached or did not answer in time: try again later."""


def _unavailable(exc: Exception, doing: str) -> OSError:
    """``StorageUnavailable`` for an outage (connection refused or reset, a timeout, a 5xx), else ``OSError``."""
    error = aws.translate(exc)
    if error.retryable:
        return StorageUnavailable(f"the push storage is unavailable ({doing}): {error}")
    return OSError(f"{doing}: {error}")


def new_writer():
    """A writer for one new body in the configured storage: ``write(bytes)``, ``tell()``, then ``close()``
    (answers the body's name) or ``abort()``."""
    if settings.HEALTH_PUSH_STORAGE == "s3":
        return S3Writer(settings.HEALTH_PUSH_BUCKET, f"{PREFIX}{uuid.uuid4().hex}.prom.gz")
    if settings.HEALTH_PUSH_STORAGE != "local":
        raise ValueError(f"HEALTH_PUSH_STORAGE must be 'local' or 's3', not {settings.HEALTH_PUSH_STORAGE!r}")
    directory = Path(settings.HEALTH_PUSH_DIR)
    directory.mkdir(parents=True, exist_ok=True)
    return LocalWriter(directory / f"{uuid.uuid4().hex}.prom.gz")


def open_body(name: str):
    """A binary stream of a stored body (gzip bytes); ``BodyMissing`` when it is gone."""
    if name.startswith(S3):
        bucket, key = _split(name)
        try:
            response = _client().get_object(Bucket=bucket, Key=key)
        except aws.AWS_EXCEPTIONS as exc:
            error = aws.translate(exc)
            if error.code in GONE:
                raise BodyMissing(f"the stored body {name} is gone ({error.code})") from None
            raise _unavailable(exc, f"reading {name}") from None
        return _Stream(response["Body"])
    try:
        return open(name, "rb")
    except FileNotFoundError:
        raise BodyMissing(f"the stored body {name} is gone") from None


def delete(name: str) -> bool:
    """Delete a stored body (gone already is fine); False when the storage could not be reached."""
    if not name:
        return True
    if name.startswith(S3):
        bucket, key = _split(name)
        try:
            _client().delete_object(Bucket=bucket, Key=key)
        except aws.AWS_EXCEPTIONS:
            return False
        return True
    Path(name).unlink(missing_ok=True)
    return True


def exists(name: str) -> bool:
    if name.startswith(S3):
        bucket, key = _split(name)
        try:
            _client().head_object(Bucket=bucket, Key=key)
        except aws.AWS_EXCEPTIONS:
            return False
        return True
    return bool(name) and Path(name).exists()


def read_all(name: str) -> bytes:
    """The whole stored body (tests and the admin's eyes only: the worker streams it)."""
    with open_body(name) as stream:
        return stream.read()


class LocalWriter:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close() or abort(), after the request streamed

    def write(self, data: bytes) -> int:
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()

    def tell(self) -> int:
        return self.file.tell()

    def close(self) -> str:
        self.file.close()
        return str(self.path)

    def abort(self) -> None:
        self.file.close()
        self.path.unlink(missing_ok=True)


class S3Writer:
    """Writes one object as bytes arrive: buffered up to a part, then a multipart upload."""

    def __init__(self, bucket: str, key: str) -> None:
        self.bucket, self.key = bucket, key
        self.client = _client()
        self.buffer = bytearray()
        self.size = 0
        self.upload_id: str | None = None
        self.parts: list[dict] = []

    def write(self, data: bytes) -> int:
        self.buffer += data
        self.size += len(data)
        if len(self.buffer) >= PART:
            self._send_part()
        return len(data)

    def flush(self) -> None:  # what GzipFile calls; parts go when they are full
        pass

    def tell(self) -> int:
        return self.size

    def _in_bucket(self, call, **kwargs):
        """``call`` on the bucket, creating the bucket first when S3 says it is not there (came back empty)."""
        try:
            return call(Bucket=self.bucket, Key=self.key, **kwargs)
        except aws.AWS_EXCEPTIONS as exc:
            if aws.translate(exc).code != "NoSuchBucket":
                raise
        ensure_bucket(self.client, self.bucket)
        return call(Bucket=self.bucket, Key=self.key, **kwargs)

    def _send_part(self) -> None:
        try:
            if self.upload_id is None:
                self.upload_id = self._in_bucket(self.client.create_multipart_upload)["UploadId"]
            number = len(self.parts) + 1
            answer = self.client.upload_part(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                             PartNumber=number, Body=bytes(self.buffer))
        except aws.AWS_EXCEPTIONS as exc:
            raise _unavailable(exc, "the body could not be stored") from None
        self.parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        self.buffer.clear()

    def close(self) -> str:
        try:
            if self.upload_id is None:
                self._in_bucket(self.client.put_object, Body=bytes(self.buffer), ContentType="application/gzip")
            else:
                if self.buffer:
                    self._send_part()
                self.client.complete_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id,
                                                      MultipartUpload={"Parts": self.parts})
        except aws.AWS_EXCEPTIONS as exc:
            self.abort()
            raise _unavailable(exc, "the body could not be stored") from None
        self.buffer = bytearray()
        return f"{S3}{self.bucket}/{self.key}"

    def abort(self) -> None:
        self.buffer = bytearray()
        if self.upload_id is not None:
            with contextlib.suppress(*aws.AWS_EXCEPTIONS):  # else the lifecycle rule aborts it a day later
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=self.key, UploadId=self.upload_id)


class _Stream(io.RawIOBase):
    """botocore's streaming body as a file: ``read(n)`` pulls from the open connection."""

    def __init__(self, body) -> None:
        self.body = body

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            return self.body.read(None if size is None or size < 0 else size)
        except (*aws.AWS_EXCEPTIONS, urllib3.exceptions.HTTPError) as exc:  # the store went away mid-read
            raise StorageUnavailable(f"the push storage stopped answering mid-read: {exc}") from None

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self.body.close()
        super().close()


def ensure_bucket(client, bucket: str) -> None:
    """Create the portal's bucket with its lifecycle rule: called when a write finds it missing (first use, or
    S3 came back without it), so nothing here is remembered between requests."""
    region = settings.AWS_DEFAULT_REGION
    try:
        extra = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        client.create_bucket(Bucket=bucket, **extra)
        client.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration=LIFECYCLE)
    except aws.AWS_EXCEPTIONS as exc:
        if aws.translate(exc).code not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise _unavailable(exc, f"the push bucket {bucket} is not usable") from None


LIFECYCLE = {"Rules": [{
    "ID": "health-push-bodies",
    "Filter": {"Prefix": PREFIX},
    "Status": "Enabled",
    "Expiration": {"Days": 1},
    "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
}]}


_clients: dict[str, object] = {}


def _client():
    """One S3 client per endpoint and process (building a boto3 client costs more than a small push).
    ``HEALTH_PUSH_S3_ENDPOINT_URL`` and its keys point it at S3-compatible storage (MinIO)."""
    endpoint = settings.HEALTH_PUSH_S3_ENDPOINT_URL or settings.AWS_ENDPOINT_URL
    client = _clients.get(str(endpoint))
    if client is None:
        client = _clients[str(endpoint)] = aws.client(
            "s3", endpoint_url=endpoint,
            static_keys=(settings.HEALTH_PUSH_S3_ACCESS_KEY_ID, settings.HEALTH_PUSH_S3_SECRET_ACCESS_KEY),
            timeouts=(settings.HEALTH_PUSH_S3_CONNECT_TIMEOUT, settings.HEALTH_PUSH_S3_READ_TIMEOUT),
            max_attempts=settings.HEALTH_PUSH_S3_MAX_ATTEMPTS)
    return client


def _split(name: str) -> tuple[str, str]:
    bucket, _, key = name[len(S3):].partition("/")
    return bucket, key
