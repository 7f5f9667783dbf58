// placeholder until the ISA lands
