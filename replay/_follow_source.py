"""Where ``replay --follow`` reads new version rows, and its error (issue 29, item 5): no
pyspark here, so that the error can be imported (and caught) without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlparse

from xmlevents.algebra import XmlEventsError

__all__ = ["FollowError", "FollowSource"]


class FollowError(XmlEventsError, RuntimeError):
    """A follower that cannot start or that stopped: a source it cannot read (Kafka without
    its connector), another source than its checkpoint's, a micro-batch that failed."""


@dataclass(frozen=True, slots=True)
class FollowSource:
    """Where new version rows come from: a folder (``where`` its path or URI) or a Kafka
    topic (``kafka://HOST:PORT[,HOST:PORT...]/TOPIC``: ``where`` the bootstrap servers).

    >>> FollowSource.parse("kafka://broker:9092/versions")
    FollowSource(kind='kafka', where='broker:9092', topic='versions')
    >>> FollowSource.parse("/data/incoming").kind
    'folder'
    """

    kind: str
    where: str
    topic: str | None = None

    @classmethod
    def parse(cls, text: str) -> FollowSource:
        """The source ``text`` names.

        Raises:
            FollowError: a ``kafka://`` URI without servers or topic.
        """
        if not text.startswith("kafka://"):
            return cls("folder", text)
        url = urlparse(text)
        topic = url.path.strip("/")
        if not url.netloc or not topic or "/" in topic:
            raise FollowError(f"{text}: a Kafka source is kafka://HOST:PORT/TOPIC (servers "
                              "separated by commas, one topic)")
        return cls("kafka", url.netloc, topic)

    def __str__(self) -> str:
        return self.where if self.kind == "folder" else f"kafka://{self.where}/{self.topic}"
