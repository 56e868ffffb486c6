"""MQTT: the topic catalogue, payloads and the broker connection (the only paho user)."""
