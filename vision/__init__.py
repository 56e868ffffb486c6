"""Tile recognition: calibration, zones, detection, classification and temporal
filtering of camera frames. Knows nothing of the engine. (Vision issue.)"""
