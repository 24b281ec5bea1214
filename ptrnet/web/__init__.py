"""The local web page behind ``ptrnet serve`` (needs the ``web`` extra); see docs/web.md."""
