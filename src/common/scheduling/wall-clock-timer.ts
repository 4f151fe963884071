// setTimeout, but never before `ms` of the wall clock have passed since it was set.
//
// libuv counts its timers' clock in whole milliseconds, and Date.now() is another clock: a plain timer of
// 300 ms can fire when Date.now() has moved by 299 (an audit row said a call stopped at its 300 ms timeout
// after 299 ms). Fired early, this one waits out the rest. Returns what cancels it.
export function setWallClockTimeout(onExpire: () => void, ms: number): () => void {
  const due = Date.now() + ms;
  let timer: NodeJS.Timeout;
  const expire = () => {
    const left = due - Date.now();
    if (left > 0) timer = setTimeout(expire, left);
    else onExpire();
  };
  timer = setTimeout(expire, ms);
  return () => clearTimeout(timer);
}
