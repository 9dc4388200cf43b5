import os


def total(values):
    unused = len(values)
    return sum(values)
