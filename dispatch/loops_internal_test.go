package dispatch

import "testing"

// A kick reaches a loop at its project, or starts one when none is there and there is room;
// the last loop to leave with a kick not taken hands its place to a new one.
func TestKickReachesALoop(t *testing.T) {
	var started []string
	room := true
	l := &loops{start: func(groupID string, p *projectLoops) bool {
		if room {
			started = append(started, groupID)
		}
		return room
	}}

	l.kick("p") // no loop at p: one starts, counted at once
	if len(started) != 1 || l.at["p"] == nil || l.at["p"].n != 1 {
		t.Fatalf("a kick with no loop: started %v, loops %+v", started, l.at["p"])
	}
	l.kick("p") // the loop is there: it is told, nothing starts
	l.kick("p") // and kicks meanwhile are one
	if len(started) != 1 || !l.at["p"].took() || l.at["p"].took() {
		t.Errorf("kicks with a loop there: started %v", started)
	}
	l.leave("p")
	if l.at["p"] != nil {
		t.Errorf("the last loop left, with no kick pending: %+v", l.at["p"])
	}

	task := l.enter("q") // a task's loop at q
	l.kick("q")
	l.leave("q") // it leaves with the kick not taken: a kicked loop takes its place
	if len(started) != 2 || started[1] != "q" || l.at["q"] != task || task.n != 1 {
		t.Errorf("leaving with a kick pending: started %v, loops %+v", started, l.at["q"])
	}
	l.leave("q")

	room = false
	l.kick("r") // no room: left to the batch's task
	if len(started) != 2 || l.at["r"] != nil {
		t.Errorf("a kick with no room: started %v, loops %+v", started, l.at["r"])
	}
	l.enter("r")
	l.kick("r")
	l.leave("r")
	if l.at["r"] != nil {
		t.Errorf("leaving with a kick pending and no room: %+v", l.at["r"])
	}
}
