"""An API token as the admin shows it (annotate.admin.tokens)."""

from rest_framework.authtoken.models import TokenProxy

KEY_SHOWN = 6  # enough to tell two tokens apart in a conversation, far too few to use


class ApiToken(TokenProxy):
    """DRF's admin proxy (addressed by its user's id, so a URL never holds the key) with a name
    that is not the key: the admin writes an object's name into page titles, breadcrumbs, the
    delete confirmation and the history log, so every one of them held the whole key."""

    class Meta:
        proxy = True
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.user} ({self.key_start})"

    @property
    def key_start(self) -> str:
        return f"{self.key[:KEY_SHOWN]}…"
