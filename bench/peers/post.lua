-- wrk: POST the SOAP 1.1 request in file $BODY with SOAPAction $ACTION, keep-alive.
local f = assert(io.open(os.getenv("BODY") or error("set BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "text/xml; charset=utf-8"
wrk.headers["SOAPAction"] = '"' .. (os.getenv("ACTION") or "") .. '"'
