from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def documents_dir(settings, tmp_path):
    """The deal documents' storage on this test's own directory (the file system, as on the embedded
    default)."""
    location = tmp_path / "documents"
    settings.STORAGES = {**settings.STORAGES, "deal_documents": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(location), "file_permissions_mode": 0o600,
                    "directory_permissions_mode": 0o700}}}
    return location
