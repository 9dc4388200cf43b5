class Inventory:
    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, name: str, qty: int) -> None:
        if qty <= 0:
            raise ValueError("qty must be positive")
        self.items[name] = self.items.get(name, 0) + qty

    def remove(self, name: str, qty: int) -> int:
        left = self.items[name] - qty
        if left < 0:
            left = 0
        self.items[name] = left
        return left

    def report(self) -> list[str]:
        lines = []
        for name in sorted(self.items):
            lines.append(f"{name}: {self.items[name]}")
        return lines
