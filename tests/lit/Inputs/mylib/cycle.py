# Imports a name from itself that it never defines (a cycle tile must end).
from .cycle import missing
