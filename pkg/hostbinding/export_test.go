package hostbinding

// LostRaces returns how many binds of l's BindFirstFree found their host
// taken by another claim.
func LostRaces(l *Ledger) int64 { return l.lostRaces.Load() }

// SetPageSize makes l's List read n keys at a time, so that tests cover
// paging without thousands of bindings.
func SetPageSize(l *Ledger, n int64) { l.page = n }
