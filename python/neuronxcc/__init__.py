"""The older import path of NKI (neuronxcc.nki...), mapped to gensweep's front end."""
