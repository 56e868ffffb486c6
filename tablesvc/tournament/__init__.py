"""A tournament day: players, the hall's tables, seating, starting rounds, penalties, standings and the EMA export.

The data lives in the records database (the same migrations as ``records``);
the games themselves come from the tables through the records collector, so
the standings are the tables' own results, corrections included.
"""
