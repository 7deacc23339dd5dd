"""Authoring: the course's notebooks, their metadata, student versions, releases and the student's workspace."""
