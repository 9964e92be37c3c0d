"""Upload size checked while the request streams in, not after it has been read.

Django writes a multipart file to memory or a temporary file whatever its size, and a form can only
look at ``upload.size`` afterwards. This handler runs first: a body whose declared length is over
``FILE_UPLOAD_MAX_BYTES`` is refused before a byte is read, and a body without a length is stopped as
soon as the bytes received pass it.
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.core.files.uploadhandler import FileUploadHandler

DEFAULT_MAX_BYTES = 16 * 1024 * 1024


class UploadTooLarge(SuspiciousOperation):
    """The upload is over the limit (answered 413 by ``portal.core.middleware.RejectNulBytesMiddleware``)."""


def limit() -> int:
    return getattr(settings, "FILE_UPLOAD_MAX_BYTES", DEFAULT_MAX_BYTES)


class SizeLimitedUploadHandler(FileUploadHandler):
    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):  # noqa: N803
        self.received = 0
        if content_length and content_length > limit():
            raise UploadTooLarge(f"The upload is over {limit():,} bytes.")

    def receive_data_chunk(self, raw_data, start):
        self.received = getattr(self, "received", 0) + len(raw_data)
        if self.received > limit():
            raise UploadTooLarge(f"The upload is over {limit():,} bytes.")
        return raw_data

    def file_complete(self, file_size):
        return None
