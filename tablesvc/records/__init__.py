"""The club's records: every finished game of every table, kept once, and the standings read from them.

``collector`` subscribes to the tables' ``results`` and writes each game into
a records database (``store``: SQLite by default, PostgreSQL for a league),
``standings`` reads the players' figures back as data for the command line
and the web dashboard.
"""
