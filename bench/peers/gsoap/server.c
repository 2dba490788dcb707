/* gSOAP WS Test server, generated from Osprey's WSDL (wsdl2h -c, soapcpp2 -c -S; see
 * ../run.sh). One detached thread per accepted connection (the gSOAP user guide's
 * stand-alone multi-threaded server); each thread serves its keep-alive connection until
 * the client closes it. Two settings differ from gSOAP's defaults, both so that a long
 * benchmark measures steady state: unlimited requests per keep-alive connection (the
 * default closes after 100), and per-request memory freed after each request (the
 * default keeps it until the connection closes). Usage: server PORT */
#include "soapH.h"
#include "WSTestBinding.nsmap"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int end_request(struct soap *soap) {
    soap_destroy(soap);
    soap_end(soap);
    return SOAP_OK;
}

static void *serve(void *arg) {
    struct soap *soap = arg;
    pthread_detach(pthread_self());
    soap_serve(soap);
    soap_destroy(soap);
    soap_end(soap);
    soap_free(soap);
    return NULL;
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 18081;
    struct soap *soap = soap_new1(SOAP_IO_KEEPALIVE);
    soap->bind_flags = SO_REUSEADDR;
    soap->max_keep_alive = 0;
    soap->recv_timeout = soap->send_timeout = 60;
    soap->fserveloop = end_request;
    if (!soap_valid_socket(soap_bind(soap, "127.0.0.1", port, 256))) {
        soap_print_fault(soap, stderr);
        return 1;
    }
    for (;;) {
        if (!soap_valid_socket(soap_accept(soap))) continue;
        struct soap *conn = soap_copy(soap);
        pthread_t t;
        if (!conn) { soap_force_closesock(soap); continue; }
        if (pthread_create(&t, NULL, serve, conn)) soap_free(conn);
    }
}

/* The echo operations, for the SOAP 1.1 binding and (trailing _) the SOAP 1.2 binding. */
int __ns1__echoVoid(struct soap *s, struct _ns1__echoVoid *in, struct _ns1__echoVoidResponse *out) { (void)s; (void)in; (void)out; return SOAP_OK; }
int __ns1__echoStruct(struct soap *s, struct _ns1__echoStruct *in, struct _ns1__echoStructResponse *out) { (void)s; out->output = in->input; return SOAP_OK; }
int __ns1__echoList(struct soap *s, struct _ns1__echoList *in, struct _ns1__echoListResponse *out) { (void)s; out->output = in->input; return SOAP_OK; }
int __ns1__echoVoid_(struct soap *s, struct _ns1__echoVoid *in, struct _ns1__echoVoidResponse *out) { return __ns1__echoVoid(s, in, out); }
int __ns1__echoStruct_(struct soap *s, struct _ns1__echoStruct *in, struct _ns1__echoStructResponse *out) { return __ns1__echoStruct(s, in, out); }
int __ns1__echoList_(struct soap *s, struct _ns1__echoList *in, struct _ns1__echoListResponse *out) { return __ns1__echoList(s, in, out); }
