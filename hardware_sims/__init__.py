"""Faithful stand-ins for table hardware (serial devices over pseudo-terminals, a
camera renderer, a table simulator), used by tests, benchmarks and the demo."""
