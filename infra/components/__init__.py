"""The parts ``CanastaStack`` is composed of, one per seam of the backend.

Each part builds its resources with the stack itself as their scope, not inside
a child construct: a resource's logical ID derives from its construct path, and
a new level in that path would give every table, queue and function a new ID,
which CloudFormation deploys as a replacement (a new, empty table). A part is
therefore a plain class or function that receives the stack; what it exposes
(a table, a queue, an issuer) is what the parts built after it are wired to.
"""
