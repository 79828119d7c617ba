"""tcforge.ptx: read a PTX module and report the tensor-core structure of one kernel entry (`tcforge spec`)."""

from tcforge.ptx.analysis import Analysis, analyse
from tcforge.ptx.ir import PTXSyntaxError
from tcforge.ptx.module import Function, Module, Statement, read_module, read_module_file

__all__ = ["Analysis", "Function", "Module", "PTXSyntaxError", "Statement", "analyse", "read_module",
           "read_module_file"]
