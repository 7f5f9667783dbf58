// placeholder until the DL16 codec lands
