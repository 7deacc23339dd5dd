"""A class: batches over a pool or cluster, the grades folder (``gradebook``), manual marks and the class view."""
