// placeholder until the config loader lands
