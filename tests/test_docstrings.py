"""Every public class and function of metagraph/, backends/ and components/ has a docstring
(public as in tests/public_surface.py: methods of public classes included, private modules and
names starting with `_` left out). The API reference (mkdocs.yml) is generated from them."""

import ast

from public_surface import ROOT, public_definitions, public_modules


def test_every_public_class_and_function_has_a_docstring():
    missing = [f"{path.relative_to(ROOT)}:{node.lineno}: {name}"
               for path in public_modules().values()
               for name, node in public_definitions(ast.parse(path.read_text(), str(path)).body)
               if ast.get_docstring(node) is None]
    assert not missing, (f"{len(missing)} public classes/functions without a docstring (write "
                         "one; user-facing ones say Args, Returns, Raises):\n"
                         + "\n".join(missing))
