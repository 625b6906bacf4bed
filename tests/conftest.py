"""Test configuration: property tests run with a fixed seed, so every run checks the same
programs; set ``S2S_AD_EXPLORE=1`` to let Hypothesis search new ones."""

import os

from hypothesis import settings

settings.register_profile("fixed", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("explore" if os.environ.get("S2S_AD_EXPLORE") else "fixed")
