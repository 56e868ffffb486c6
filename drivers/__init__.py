"""Device drivers: serial devices (pyserial) and cameras (OpenCV), turning bytes and
frames into typed observations. They know nothing of the engine. (Service issue.)"""
