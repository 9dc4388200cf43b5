def discount(total: float, member: bool) -> float:
    if member:
        total = total * 0.9
    if total > 100:
        total = total - 5
    return round(total, 2)


def shipping(weight: float, express: bool) -> float:
    cost = 5.0
    if weight > 10:
        cost += 10.0
    if express:
        cost *= 2
    return cost
