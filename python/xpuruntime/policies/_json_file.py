"""python/xpuruntime/policies/_json_file.py: JSON text and files for the policies, given their
``to_json`` and ``from_dict``."""

import json


class JsonFile:
    """``from_json``, ``save`` and ``load`` over a class's ``to_json``/``from_dict``."""

    __slots__ = ()

    @classmethod
    def from_json(cls, text):
        return cls.from_dict(json.loads(text))

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json() + "\n")

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls.from_json(f.read())
