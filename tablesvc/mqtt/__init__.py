"""MQTT: the topic catalogue, payloads, broker URLs (:mod:`.url`), the reasons a broker cannot be reached
(:mod:`.probe`) and the broker connection (:mod:`.link`, the only paho user)."""
