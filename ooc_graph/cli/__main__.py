from . import program

program()
