"""Learning management systems: reading their submission downloads (``intake``), keeping who
each student is in the LMS (``roster``) and writing grades in their import formats
(``export``)."""
