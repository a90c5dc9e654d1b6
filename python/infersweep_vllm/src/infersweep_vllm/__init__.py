"""infersweep's Python side: the vLLM CPU plugin (plugin.py) and the tiny-model generator (models.py)."""
