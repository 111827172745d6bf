"""Learning management systems: reading their submission downloads (``intake``) and
writing grades in their import formats (``export``)."""
