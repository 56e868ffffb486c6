"""The web server: stream overlay, club dashboard and referee console, fed from MQTT (see ``server.py``)."""
