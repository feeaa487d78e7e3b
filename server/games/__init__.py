"""The hot path: games in memory and what happens to them.

``host`` holds the games this process serves (loaded once from their log, then the authority
here) and applies actions to them one at a time: the engine decides, the writer appends (the
only path to the log), the feed publishes. ``service`` is ``GameService`` over it; ``app``
makes games (and deals their first hand); ``clocks`` runs the games' clocks; ``feed`` wakes the
watchers; ``seat_tokens`` and ``time_controls`` are the seats' tokens and the clocks' wire forms.
"""
